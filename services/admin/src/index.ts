export { adminService, type Admin } from './service.ts';

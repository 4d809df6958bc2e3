export { adminService, type Admin } from './service.ts';
export { seededBaseUrlHosts } from './domain/providers.ts';

export { adminService, type Admin } from './service.ts';
export { seededBaseUrlHosts, seedEnvSchema } from './domain/providers.ts';

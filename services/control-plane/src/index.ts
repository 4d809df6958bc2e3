export { controlPlane, bootstrapDatabase, bootstrapEnvSchema, type ControlPlane } from './service.ts';
export type { BootstrapResult } from './domain/bootstrap.service.ts';

export { policyService } from './service.ts';

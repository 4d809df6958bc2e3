export { createPolicyService, policyService, type PolicyServiceOptions } from './service.ts';

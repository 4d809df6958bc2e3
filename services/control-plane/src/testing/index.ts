// `@switchyard/control-plane/testing`: what other packages' tests use of control-plane: its
// store written to directly (organisations, keys), the migrations they run again, and the
// workspace helper for route tests. Nothing here is served or loaded outside tests.
export { seedOrganisation, type SeededOrganisation } from './organisations.ts';
export { createWorkspace } from './workspaces.ts';
export { keyMaterialOf } from '../domain/api-keys.ts';
export { IdentityRepository } from '../store/identity.repository.ts';
export { AuditLogScope1763700000014 } from '../store/migrations/1763700000014-audit-log-scope.ts';
export { SsoScopes1763700000015 } from '../store/migrations/1763700000015-sso-scopes.ts';

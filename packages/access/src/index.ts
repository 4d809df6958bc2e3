// `@switchyard/access`: who is calling and what they may do: principals, scopes, API-key and JWT
// authentication, the audit trail's route marks.
export {
  attachAuditActor,
  attachAuditSink,
  type AuditEntry,
  type AuditSink,
  auditTrail,
  auditWrite,
  READS,
} from './audit-trail.ts';
export {
  apiKeyAuthentication,
  ApiKeyCache,
  assertOrganisationAdmin,
  bearerToken,
  type PrincipalLookup,
  requirePrincipal,
  requireWorkspacePrincipal,
  SESSION_COOKIE,
  sessionCookie,
} from './auth.ts';
export {
  JwksKeySet,
  jwtEnvSchema,
  jwtStrategy,
  type JwtAdmission,
  type WorkspaceLookup,
} from './jwt-auth.ts';
export { type ApiKeyKind, callerDefaults, type Principal, type PrincipalDefaults } from './principal.ts';
export {
  ALL_SCOPES,
  assertScope,
  DATA_PLANE_SCOPES,
  hasScope,
  isScope,
  kindCanHold,
  type Scope,
  scopeLevel,
  scopePlane,
  scopesForKind,
  scopesForWorkspaceRole,
} from './scopes.ts';

// `@switchyard/runtime`: a service's runtime: gRPC bridge, scoped routes and OpenAPI, the route table,
// identity and audit wiring, standalone and in-process start-up.
export {
  type CallerRules,
  createGrpcClient,
  type GrpcSecurity,
  GrpcServer,
  GrpcStatus,
  type RegisteredMethod,
  type ServiceClient,
  type ServiceHandlers,
  systemHttpToken,
} from './grpc.ts';
export {
  callerAuthentication,
  invalidateApiKeys,
  onChanges,
  remotePrincipalLookup,
  remoteWorkspaceLookup,
  type RemoteWorkspaceLookup,
} from './identity.ts';
export { assembleInProcess, type InProcessServices } from './in-process.ts';
export {
  type JsonSchema,
  openApiDocument,
  type OpenApiDocument,
  OpenApiError,
  type OpenApiOperation,
  openApiPath,
  type OpenApiReference,
  type OpenApiResponse,
  serveOpenApi,
} from './openapi.ts';
export { isServiceName, serviceForPath, type ServiceName, serviceNames } from './routes.ts';
export {
  applyV8Flags,
  type ClientName,
  type Clients,
  clientTargets,
  createClients,
  describedOnly,
  migrateSettings,
  need,
  runMigrations,
  runStandalone,
  serveScoped,
  type ServiceDefinition,
  type ServiceInstance,
  type StandaloneOptions,
  standaloneRouters,
  standaloneSettings,
} from './runtime.ts';
export {
  type Access,
  type BodyContent,
  type DeclaredRoute,
  type ErrorShape,
  type HttpMethod,
  pathParameters,
  type PatternOperation,
  type ScopedExample,
  ScopedRouter,
} from './scoped-router.ts';

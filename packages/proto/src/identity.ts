export * from './gen/switchyard/identity/v1/identity_pb.ts';
export * from './gen/switchyard/identity/v1/sso_sessions_pb.ts';

export * from './gen/switchyard/admin/v1/integrations_pb.ts';
export * from './gen/switchyard/admin/v1/organisation_settings_pb.ts';
export * from './gen/switchyard/admin/v1/deployments_pb.ts';
export * from './gen/switchyard/admin/v1/secret_references_pb.ts';

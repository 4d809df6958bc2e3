export * as health from './gen/grpc/health/v1/health_pb.ts';
export * as identity from './identity.ts';
export * as admin from './admin.ts';
export * as configs from './gen/switchyard/configs/v1/configs_pb.ts';
export * as policy from './gen/switchyard/policy/v1/policy_pb.ts';
export * as events from './gen/switchyard/events/v1/events_pb.ts';
export * as guardrails from './gen/switchyard/guardrails/v1/guardrails_pb.ts';
export * as mcp from './gen/switchyard/mcp/v1/mcp_pb.ts';

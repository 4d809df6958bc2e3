export { ensureDependencies, killKafka, startKafka, repoRoot } from './deps.ts';
export { eventually, httpRequest, type ApiResponse, type Json, type RequestOptions } from './http.ts';
export { KafkaProbe } from './kafka.ts';
export { ServiceProcess, logDir } from './processes.ts';
export { startPrivateRedis, type PrivateRedis } from './redis.ts';
export { addFakeOpenAi, createServiceKey, createWorkspace } from './setup.ts';
export {
  freePorts,
  serviceOrder,
  startStack,
  type Stack,
  type StackOptions,
  type StackRequestOptions,
} from './stack.ts';

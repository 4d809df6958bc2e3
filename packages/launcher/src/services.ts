import { adminService } from '@switchyard/admin';
import { controlPlane } from '@switchyard/control-plane';
import { gatewayService } from '@switchyard/gateway';
import { logExportService } from '@switchyard/log-export';
import { policyService } from '@switchyard/policy';
import type { ServiceDefinition } from '@switchyard/runtime';

/** In dependency order: a service's gRPC peers come before it. */
export const allServices: ServiceDefinition[] = [
  controlPlane as ServiceDefinition,
  policyService,
  adminService as ServiceDefinition,
  logExportService,
  gatewayService,
];

export { adminService, controlPlane };

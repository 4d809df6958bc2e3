import { adminService } from '@switchyard/admin';
import { controlPlane } from '@switchyard/control-plane';
import { logExportService } from '@switchyard/log-export';
import { policyService } from '@switchyard/policy';
import type { ServiceDefinition } from '@switchyard/runtime';
import { gatewayService } from '../service.ts';

/** Every service, in dependency order: for tests that follow a request on to its log. */
export const everyService: ServiceDefinition[] = [
  controlPlane as ServiceDefinition,
  policyService,
  adminService as ServiceDefinition,
  logExportService,
  gatewayService,
];

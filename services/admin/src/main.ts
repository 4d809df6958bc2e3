import { runStandalone } from '@switchyard/runtime';
import { adminService } from './service.ts';

await runStandalone(adminService);

import { runStandalone } from '@switchyard/platform';
import { adminService } from './service.ts';

await runStandalone(adminService);

import { runStandalone } from '@switchyard/runtime';
import { logExportService } from './service.ts';

await runStandalone(logExportService);

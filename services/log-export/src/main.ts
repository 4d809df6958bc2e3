import { runStandalone } from '@switchyard/platform';
import { logExportService } from './service.ts';

await runStandalone(logExportService);

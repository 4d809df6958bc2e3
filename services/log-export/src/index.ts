export { logExportService } from './service.ts';

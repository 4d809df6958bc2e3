import { runStandalone } from '@switchyard/platform';
import { controlPlane } from './service.ts';

await runStandalone(controlPlane);

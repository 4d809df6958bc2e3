import { runStandalone } from '@switchyard/runtime';
import { controlPlane } from './service.ts';

await runStandalone(controlPlane);

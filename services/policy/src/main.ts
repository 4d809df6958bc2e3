import { runStandalone } from '@switchyard/runtime';
import { policyService } from './service.ts';

await runStandalone(policyService);

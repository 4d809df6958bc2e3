import { runStandalone } from '@switchyard/platform';
import { policyService } from './service.ts';

await runStandalone(policyService);

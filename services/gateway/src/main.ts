import { runStandalone } from '@switchyard/runtime';
import { gatewayService } from './service.ts';

await runStandalone(gatewayService);

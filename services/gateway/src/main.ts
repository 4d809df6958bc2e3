import { runStandalone } from '@switchyard/platform';
import { gatewayService } from './service.ts';

await runStandalone(gatewayService);

export { gatewayService } from './service.ts';

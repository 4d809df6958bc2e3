import { nodePath, type RoutingTarget } from '@switchyard/rules';
import type { ChatProvider } from '../providers/types.ts';
import type { GatewayContext, GatewayRequest, IncomingCall } from './gateway-request.ts';
import { routeRequest } from './provider-routing.ts';

type RoutingContext = Pick<GatewayContext, 'providers' | 'inline' | 'integrations' | 'headerPrefix'>;

/**
 * Whether every target a request may route to has an adapter that `serves`: its own choice of
 * provider, or each leaf of its config (every fallback, load-balanced and conditional target,
 * with the model the nearest override_params set). A target that cannot be resolved counts as
 * not served: the request then takes the path where routing tells what is wrong.
 */
export async function everyTargetServes(
  context: RoutingContext,
  request: GatewayRequest,
  call: IncomingCall,
  model: string | undefined,
  serves: (provider: ChatProvider) => boolean,
): Promise<boolean> {
  try {
    const resolved = await request.config();
    for (const { leaf, path, overriddenModel } of leavesOf(resolved?.config ?? {}, 'config', undefined)) {
      const routed = await routeRequest(
        {
          principal: call.principal,
          model: overriddenModel ?? model,
          headers: call.headers,
          inline: context.inline,
          providerKey: call.providerKey,
          integrations: context.integrations,
          headerPrefix: context.headerPrefix,
          directProviders: context.providers,
        },
        leaf,
        path,
      );
      const provider = context.providers.get(routed.target.provider);
      if (!provider || !serves(provider)) return false;
    }
    return true;
  } catch {
    return false;
  }
}

/** Each leaf of a config's routing tree, with the model its override_params set (the nearest winning). */
function leavesOf(
  node: RoutingTarget,
  path: string,
  overriddenModel: string | undefined,
): Array<{ leaf: RoutingTarget; path: string; overriddenModel: string | undefined }> {
  const model = node.override_params?.model;
  const inherited = typeof model === 'string' ? model : overriddenModel;
  if (!node.targets) return [{ leaf: node, path, overriddenModel: inherited }];
  return node.targets.flatMap((target, i) => leavesOf(target, nodePath(path, i), inherited));
}

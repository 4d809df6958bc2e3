// The check is shared with admin (SSO identity providers); it lives in platform.
export {
  checkCustomHost,
  isPublicAddress,
  isTrusted,
  systemResolver,
  type Resolver,
} from '@switchyard/rules';

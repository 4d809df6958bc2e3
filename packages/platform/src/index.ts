// Temporary: `@switchyard/platform` was split into @switchyard/core, http, rules, access, adapters
// and runtime. This shim re-exports their entry points so that code not yet moved to them keeps
// compiling; remove it once nothing imports '@switchyard/platform'.
export * from '@switchyard/core';
export * from '@switchyard/http';
export * from '@switchyard/rules';
export * from '@switchyard/access';
export * from '@switchyard/adapters';
export * from '@switchyard/runtime';

// Temporary: `@switchyard/platform/testing` moved to `@switchyard/core/testing`; this shim
// re-exports it until nothing imports '@switchyard/platform/testing'.
export * from '@switchyard/core/testing';

import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import { importX } from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import reactHooks from 'eslint-plugin-react-hooks';

// A package is imported through its entry points only: '@switchyard/<name>', and
// '@switchyard/<name>/testing' for the helpers other packages' tests use.
const packageEntryPattern = {
  regex: '^@switchyard/[^/]+/(?!testing$)',
  message:
    "Import another package through its entry point ('@switchyard/<name>', or '@switchyard/<name>/testing' for test helpers), not one of its files; add what you need to that entry.",
};

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      '.data/**',
      '.tools/**',
      'packages/proto/src/gen/**',
      'helm/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
    },
  },
  {
    // Import cycles fail lint. Imports are resolved as TypeScript does (the './foo.ts'
    // specifiers, the workspace packages' "exports"); type-only imports (`import type`) are
    // erased at run time, and import-x's no-cycle does not follow them.
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts', '.tsx', '.js', '.mjs'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.tsx'] },
      'import-x/external-module-folders': ['node_modules'],
      'import-x/resolver-next': [
        createTypeScriptImportResolver({
          project: ['tsconfig.json', 'console/tsconfig.json'],
          noWarnOnMultipleProjects: true,
        }),
      ],
    },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'no-restricted-imports': ['error', { patterns: [packageEntryPattern] }],
    },
  },
  {
    // Layers inside a service: http/ (the only code that sees express) and grpc/ call into
    // domain/ (rules and application services), which reads and writes through store/ and
    // calls other services through clients/. Nothing points back up.
    files: ['services/*/src/**/*.ts'],
    ignores: ['**/*.test.ts', '**/testing/**'],
    rules: {
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            {
              target: 'services/*/src/domain/**',
              from: ['services/*/src/http/**', 'services/*/src/grpc/**', 'services/*/src/clients/**'],
              message:
                'domain/ does not depend on the layers that call it or carry it: take what it needs as an argument or an interface.',
            },
            {
              target: 'services/*/src/store/**',
              from: [
                'services/*/src/http/**',
                'services/*/src/grpc/**',
                'services/*/src/clients/**',
                'services/*/src/events/**',
              ],
              message: 'store/ holds queries only: it depends on nothing above it.',
            },
            {
              target: ['services/*/src/clients/**', 'services/*/src/events/**'],
              from: ['services/*/src/http/**', 'services/*/src/grpc/**'],
              message: 'clients/ and events/ do not depend on the HTTP or gRPC servers.',
            },
          ],
        },
      ],
    },
  },
  {
    // domain/ uses no I/O library: express, database, cache, bus, gRPC and HTTP clients stay in
    // the layers around it.
    files: ['services/*/src/domain/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: ['express', 'typeorm', 'pg', 'redis', 'kafkajs', '@grpc/grpc-js', 'undici'].map((name) => ({
            name,
            message: `domain/ uses no I/O library: ${name} belongs to http/, store/, clients/, events/ or grpc/.`,
          })),
          patterns: [packageEntryPattern],
        },
      ],
    },
  },
  {
    // The console runs in the browser: DOM globals, React's rules of hooks, and nothing of the
    // server packages (it speaks to the gateway over its public HTTP APIs only).
    files: ['console/src/**/*.{ts,tsx}'],
    ignores: ['console/src/**/*.test.ts'],
    languageOptions: { globals: { ...globals.browser } },
    plugins: { 'react-hooks': reactHooks },
    rules: {
      ...reactHooks.configs.recommended.rules,
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^@switchyard/',
              message: 'The console talks to the gateway over its public HTTP APIs only (src/api.ts).',
            },
            { regex: '^node:', message: 'The console runs in the browser.' },
          ],
        },
      ],
    },
  },
);

import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import { importX } from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

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
      'import-x/extensions': ['.ts', '.js', '.mjs'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/external-module-folders': ['node_modules'],
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: 'tsconfig.json' })],
    },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      // A package is imported through its entry points only: '@switchyard/<name>', and
      // '@switchyard/<name>/testing' for the helpers other packages' tests use.
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^@switchyard/[^/]+/(?!testing$)',
              message:
                "Import another package through its entry point ('@switchyard/<name>', or '@switchyard/<name>/testing' for test helpers), not one of its files; add what you need to that entry.",
            },
          ],
        },
      ],
    },
  },
);

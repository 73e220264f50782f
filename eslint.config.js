import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  // packages/*/dist: the SDK's build output (issue 21).
  { ignores: ['node_modules', 'data', 'coverage', 'dist', 'packages/*/dist', '.build-*', 'bin', '.dependency-cruiser.cjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': ['error', { allow: ['error'] }],
    },
  },
  { files: ['test/**'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
  { files: ['src/cli/**', 'src/server.ts', 'bench/**', 'scripts/**', 'examples/**'], rules: { 'no-console': 'off' } },
  // Scripts the pages serve run in the browser.
  { files: ['src/**/assets/*.js'], languageOptions: { globals: { ...globals.browser } } },
);

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
  // Time is a dependency (src/kernel/clock.ts): src/ reads it through the app's clock, never the system's directly.
  {
    files: ['src/**/*.ts'],
    ignores: ['src/kernel/clock.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: "CallExpression[callee.object.name='Date'][callee.property.name='now']", message: 'Read the time through the clock (src/kernel/clock.ts): clock.now(), not Date.now().' },
        { selector: "NewExpression[callee.name='Date'][arguments.length=0]", message: 'Read the time through the clock (src/kernel/clock.ts): clock.date(), not new Date().' },
      ],
    },
  },
  // The composition root builds each module from those built before it, then wires the ports of
  // later ones (Wired, src/kernel/module.ts): a forward reference, even inside a closure, is refused.
  { files: ['src/modules.ts'], rules: { '@typescript-eslint/no-use-before-define': ['error', { functions: false, classes: true, variables: true, allowNamedExports: false, ignoreTypeReferences: true }] } },
  { files: ['test/**'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
  { files: ['src/cli/**', 'src/server.ts', 'bench/**', 'scripts/**', 'examples/**'], rules: { 'no-console': 'off' } },
  // Scripts the pages serve run in the browser.
  { files: ['src/**/assets/*.js'], languageOptions: { globals: { ...globals.browser } } },
);

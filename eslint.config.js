// @ts-check
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/**", "packages/*/dist/**", "node_modules/**", "coverage/**", ".stead/**", "**/*.d.ts"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ["*.js", "*.mjs", "bin/*.js", "test/fixtures/*.mjs", "test/fixtures/crash/*.mjs", "test/fixtures/pg/*.mjs", "test/fixtures/backup/*.mjs", "test/fixtures/agents-crash/*.mjs", "test/fixtures/workspace-crash/*.mjs", "examples/*.mjs"], maximumDefaultProjectFileMatchCount_THIS_WILL_SLOW_DOWN_LINTING: 12 }, tsconfigRootDir: import.meta.dirname },
      globals: { process: "readonly", console: "readonly", setTimeout: "readonly", clearTimeout: "readonly", setInterval: "readonly", clearInterval: "readonly", setImmediate: "readonly", URL: "readonly", fetch: "readonly" },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/only-throw-error": "off",
      "@typescript-eslint/restrict-template-expressions": ["error", { allowNumber: true, allowBoolean: true }],
    },
  },
);

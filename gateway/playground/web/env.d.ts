// esbuild bundles the stylesheet imported by main.tsx into its own hashed .css file.
declare module '*.css';

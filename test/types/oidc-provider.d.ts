// node-oidc-provider ships no type declarations; the tests that run it as an upstream provider use it untyped.
declare module 'oidc-provider';

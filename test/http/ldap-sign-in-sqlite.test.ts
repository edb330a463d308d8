import { ldapSignInTests } from './ldap-sign-in.js';

ldapSignInTests('sqlite');

import { dialects } from '../helpers/db.js';
import { ldapSignInTests } from './ldap-sign-in.js';

if (dialects().includes('postgres')) ldapSignInTests('postgres');

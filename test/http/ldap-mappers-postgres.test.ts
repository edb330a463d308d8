import { dialects } from '../helpers/db.js';
import { ldapMapperTests } from './ldap-mappers.js';

if (dialects().includes('postgres')) ldapMapperTests('postgres');

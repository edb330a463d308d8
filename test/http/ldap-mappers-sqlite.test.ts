import { ldapMapperTests } from './ldap-mappers.js';

ldapMapperTests('sqlite');

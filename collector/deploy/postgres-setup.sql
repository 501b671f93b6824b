-- PostgreSQL for the collector, run once as the superuser (sudo -u postgres psql -f postgres-setup.sql): a role named
-- like the service's user (peer authentication over the Unix socket, no password) owning one database. The collector
-- creates and migrates its tables itself at start.
CREATE ROLE "dnscost-collector" LOGIN;
CREATE DATABASE dnscost OWNER "dnscost-collector";

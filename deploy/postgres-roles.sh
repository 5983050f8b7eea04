#!/bin/sh
# Run once by the postgres image when it creates its cluster (/docker-entrypoint-initdb.d):
# the login the services connect as, a member of fairway_app, the NOLOGIN role whose rights
# `fairway migrate` grants (read and append events and receipt keys, nothing else;
# deploy/README.md). The migration runs as the database's owner ($POSTGRES_USER) and finds
# fairway_app made here.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -v password="$FAIRWAY_DB_PASSWORD" <<'SQL'
CREATE ROLE fairway_app NOLOGIN;
CREATE ROLE fairway_service LOGIN PASSWORD :'password' IN ROLE fairway_app;
SQL

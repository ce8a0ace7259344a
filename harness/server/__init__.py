"""The server building blocks: builds (the catalog, Debian roots, setup's packages), the
accounts and grants a harness uses, a my.cnf read as each build's mysqld reads it, the
OS user that runs mysqld, client connections, and the dataset snapshots' cache."""

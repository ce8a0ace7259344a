"""mysql-harness: benchmark orchestration for MySQL, Percona Server and MariaDB."""
__version__ = "0.2.0"

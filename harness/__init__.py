"""mysql-harness: benchmark orchestration for MySQL, Percona Server and MariaDB."""
__version__ = "0.1.0"

from relore.client.cli import entry

entry()

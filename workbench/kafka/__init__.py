"""What Kafka itself does, stated once and cited to its source. Imports nothing of ours but itself."""

"""Raw evidence -> DataFrames, no judgement."""

"""What a run measured: counts and rates (results), latency histograms and their
statistics (histogram, latency, stats), and the per-test record they are kept in
(recording).

Below everything but the base modules (units, errors, files, atomic): nothing here
knows the engine, the procedures or pytest.
"""

"""What storbench reaches beyond its own process: remote hosts (ssh agents, their counters
and inventory), this machine's utilisation and power, the network between them, the Ceph
clusters and S3 endpoints it measures (their tools and credentials), and the guard that no
engine process outlives a run."""

"""What storbench reaches beyond its own process: remote hosts, and the Ceph clusters it
measures (their command-line tools, shared by preflight, the engines, drills and the runner).
"""

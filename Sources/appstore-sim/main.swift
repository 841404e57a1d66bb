import AppStoreSimulator

print("appstore-sim: not yet implemented")

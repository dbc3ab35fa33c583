"""device_functions"""
